// Builds the test host (host.tsx) into ../../dist-host. The shared config is
// the console's contract with plugins: the modules
// @openshift-console/dynamic-plugin-sdk-webpack lists in sharedPluginModules
// that this plugin uses, as eager singletons at the versions the SDK's
// package.json asks for; the SDK itself is the host's implementation
// (sdk.ts), as the console provides its own lib-core.
const path = require('path');
const { container } = require('webpack');

const dep = (name) => require(`${name}/package.json`).version;
const eager = (name) => ({ singleton: true, eager: true, requiredVersion: false, version: dep(name) });

module.exports = {
  mode: 'development',
  context: __dirname,
  entry: { host: './host.tsx' },
  output: { path: path.resolve(__dirname, '../../dist-host'), filename: '[name].js', publicPath: '/static/' },
  resolve: { extensions: ['.ts', '.tsx', '.js'] },
  module: {
    rules: [
      {
        test: /\.tsx?$/,
        exclude: /node_modules/,
        use: [
          {
            loader: 'ts-loader',
            options: { transpileOnly: true, compilerOptions: { jsx: 'react', module: 'esnext' } },
          },
        ],
      },
    ],
  },
  plugins: [
    new container.ModuleFederationPlugin({
      name: 'console_host',
      shared: {
        react: eager('react'),
        'react-router': eager('react-router'),
        'react-redux': eager('react-redux'),
        redux: eager('redux'),
        'redux-thunk': eager('redux-thunk'),
        'react-i18next': eager('react-i18next'),
        '@openshift/dynamic-plugin-sdk': eager('@openshift/dynamic-plugin-sdk'),
        '@openshift-console/dynamic-plugin-sdk': {
          import: path.resolve(__dirname, 'sdk.ts'),
          shareKey: '@openshift-console/dynamic-plugin-sdk',
          singleton: true,
          eager: true,
          requiredVersion: false,
          version: dep('@openshift-console/dynamic-plugin-sdk'),
        },
      },
    }),
  ],
  devtool: false,
};
